import 'reflect-metadata';
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  type INestApplication,
  Module,
  NotFoundException,
  Param,
  Post,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type ConventionsOptions, conventions, errorHandler, notFound } from '../../src/index.js';
import { ConventionsExceptionFilter } from '../../src/nestjs/index.js';

/**
 * A NestJS 11 app on @nestjs/platform-express, as a team writes it, with the
 * two lines of docs/guides/nestjs.md. The decorators are applied by calling
 * them (what TypeScript's legacy decorators compile to), so this file needs no
 * decorator setting of the compiler. Nest registers the routes in the
 * order of the class's methods: `boom` before `:id`.
 */

const USERS = [
  { id: 1, name: 'Ada' },
  { id: 2, name: 'Grace' },
];

class UsersController {
  list() {
    return { users: USERS, hasNext: false };
  }

  boom(): never {
    throw new Error('the database password is hunter2');
  }

  one(id: string) {
    const user = USERS.find((candidate) => String(candidate.id) === id);
    if (!user) throw new NotFoundException('No user has this id.');
    return user;
  }

  create(body: { name?: unknown; email?: unknown }) {
    const problems = [
      ...(typeof body?.name === 'string' ? [] : ['name must be a string']),
      ...(typeof body?.email === 'string' && body.email.includes('@') ? [] : ['email must be an email']),
    ];
    // What class-validator's ValidationPipe throws: one message per problem.
    if (problems.length > 0) throw new BadRequestException(problems);
    return { id: 3, name: body.name };
  }
}

const method = (name: keyof UsersController) =>
  [UsersController.prototype, name, Object.getOwnPropertyDescriptor(UsersController.prototype, name)] as [
    object,
    string,
    PropertyDescriptor,
  ];
Controller('v1/users')(UsersController);
Get()(...method('list'));
Get('boom')(...method('boom'));
Get(':id')(...method('one'));
Param('id')(UsersController.prototype, 'one', 0);
Post()(...method('create'));
Body()(UsersController.prototype, 'create', 0);

class AppModule {}
Module({ controllers: [UsersController] })(AppModule);

/** The app, initialised, with the two lines; `options` are conventions()'s. */
export async function createNestApp(options: ConventionsOptions = {}): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule, { logger: false });
  app.use(conventions(options));
  app.useGlobalFilters(new ConventionsExceptionFilter({ log: false }));
  await app.init();
  return app;
}

/** The app as the README's Express recipe would make it: notFound() and errorHandler() mounted before Nest adds its routes. */
export async function createMisorderedNestApp(): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule, { logger: false });
  app.use(conventions());
  app.use(notFound(), errorHandler({ log: false }));
  await app.init();
  return app;
}
