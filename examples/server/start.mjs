// Minimal server until the reference server lands (issue 7): the foundation
// modules, wired only from the package's public exports.
import express from 'express';
import { conventions, errorHandler, idPair, maintenance, notFound } from 'express-api-conventions';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

const app = express();
app.disable('x-powered-by');
if (process.env.MAINTENANCE === '1') app.use(maintenance({ retryAfter: 300 }));
app.use(conventions());
app.get('/v1/status', (_req, res) => {
  res.json({ ...idPair(9007199254740993n), status: 'ok', checkedAt: new Date() });
});
app.use(notFound(), errorHandler());

const server = app.listen(port, host, () => console.log(`listening on http://${host}:${port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
