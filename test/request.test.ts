import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { errorHandler, notFound } from '../src/errors/index.js';
import { jsonResponses } from '../src/json/index.js';
import { methodOverride, parseBodies } from '../src/request/index.js';

const echoApp = (override = methodOverride()) => {
  const app = express();
  app.use(jsonResponses(), ...parseBodies(), override);
  for (const method of ['post', 'put', 'patch', 'delete'] as const) {
    app[method]('/v1/users/1', (req, res) => {
      res.json({ method: req.method, originalMethod: req.originalMethod ?? null, body: req.body ?? null });
    });
  }
  app.get('/v1/users/1', (req, res) => {
    res.json({ method: req.method });
  });
  app.use(notFound(), errorHandler({ production: true, log: false }));
  return app;
};

/** The refusal, with the fix it names. */
const refused = (message: string) => ({
  errors: [
    {
      message: `The method override is not allowed: ${message} Send the method itself, or POST with X-HTTP-Method-Override (methodOverride({ methods }) lists the ones allowed).`,
      code: 40002,
    },
  ],
});

describe('methodOverride()', () => {
  const app = echoApp();

  describe('with the X-HTTP-Method-Override header', () => {
    it.each(['PUT', 'PATCH', 'DELETE'])('routes a POST as %s', async (method) => {
      const res = await request(app).post('/v1/users/1').set('X-HTTP-Method-Override', method).send({ a: 1 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ method, originalMethod: 'POST', body: { a: 1 } });
    });

    it('accepts the method name in lower case', async () => {
      const res = await request(app).post('/v1/users/1').set('X-HTTP-Method-Override', 'patch');
      expect(res.body.method).toBe('PATCH');
    });

    it('refuses a method outside the allowed set with 400', async () => {
      const res = await request(app).post('/v1/users/1').set('X-HTTP-Method-Override', 'GET');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused('"GET" is not one of PUT, PATCH, DELETE.'));
    });

    it('refuses an override on anything but a POST', async () => {
      const res = await request(app).get('/v1/users/1').set('X-HTTP-Method-Override', 'DELETE');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused('only a POST can be overridden, this request is a GET.'));
    });
  });

  describe('with the _method form field', () => {
    it('routes a form POST as the named method and removes the field from the body', async () => {
      const res = await request(app).post('/v1/users/1').type('form').send('_method=DELETE&name=Ada');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ method: 'DELETE', originalMethod: 'POST', body: { name: 'Ada' } });
    });

    it('does not honour _method in a JSON body', async () => {
      const res = await request(app).post('/v1/users/1').send({ _method: 'DELETE' });
      expect(res.body).toEqual({ method: 'POST', originalMethod: null, body: { _method: 'DELETE' } });
    });

    it('refuses a header and a field that disagree', async () => {
      const res = await request(app).post('/v1/users/1').set('X-HTTP-Method-Override', 'PUT').type('form').send('_method=DELETE');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused('the header and the _method field name different methods.'));
    });

    it('refuses a repeated _method field', async () => {
      const res = await request(app).post('/v1/users/1').type('form').send('_method=PUT&_method=DELETE');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused('the _method field is sent more than once.'));
    });
  });

  describe('options', () => {
    it('narrows the allowed set', async () => {
      const res = await request(echoApp(methodOverride({ methods: ['DELETE'] })))
        .post('/v1/users/1')
        .set('X-HTTP-Method-Override', 'PUT');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refused('"PUT" is not one of DELETE.'));
    });

    it('refuses a method list that is not upper-case names', () => {
      expect(() => methodOverride({ methods: ['put'] })).toThrow(
        "methodOverride(options): `methods` must be an array of upper-case method names such as ['PUT', 'PATCH', 'DELETE']; received [\"put\"].",
      );
    });
  });
});

describe('parseBodies()', () => {
  const app = echoApp();

  it('parses a JSON body', async () => {
    const res = await request(app).post('/v1/users/1').send({ name: 'Ada', n: 2 });
    expect(res.body.body).toEqual({ name: 'Ada', n: 2 });
  });

  it('parses a form body flat, with no nested objects and no prototype access', async () => {
    const res = await request(app).post('/v1/users/1').type('form').send('a[b]=1&__proto__[x]=2&name=%C3%A9');
    expect(res.body.body).toEqual({ 'a[b]': '1', '__proto__[x]': '2', name: 'é' });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('parses a chunked JSON body, sent with Transfer-Encoding and no Content-Length', async () => {
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = await new Promise<string>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/users/1' }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.setHeader('Content-Type', 'application/json');
        req.write('{"name":');
        req.end('"Ada"}');
      });
      expect(JSON.parse(body)).toEqual({ method: 'POST', originalMethod: null, body: { name: 'Ada' } });
    } finally {
      server.close();
    }
  });

  it('leaves req.body undefined when the request has no body', async () => {
    const res = await request(app).delete('/v1/users/1');
    expect(res.body).toEqual({ method: 'DELETE', originalMethod: null, body: null });
  });

  it('refuses a body above the default limit of 100kb with 413', async () => {
    const res = await request(app)
      .post('/v1/users/1')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ big: 'x'.repeat(101 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ errors: [{ message: 'The request body is too large.', code: 41300 }] });
  });

  it('refuses more form parameters than allowed with 413', async () => {
    const form = Array.from({ length: 101 }, (_, i) => `k${i}=v`).join('&');
    const res = await request(app).post('/v1/users/1').type('form').send(form);
    expect(res.status).toBe(413);
  });

  it('refuses a wrong limit at start-up', () => {
    expect(() => parseBodies({ limit: 'lots' })).toThrow(
      'parseBodies(options): `limit` must be a positive whole number of bytes or a size such as \'100kb\'; received "lots".',
    );
  });
});
