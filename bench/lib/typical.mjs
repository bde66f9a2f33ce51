// The "typical app" set: the same neighbours in front of
// each bench app, as a team runs them: a request logger writing to a null
// stream and cookie parsing. The app itself is mounted after them, whole.
import { Writable } from 'node:stream';
import cookieParser from 'cookie-parser';
import express from 'express';
import morgan from 'morgan';

const nowhere = new Writable({
  write(_chunk, _encoding, done) {
    done();
  },
});

/** `app` behind morgan ('combined', to a null stream) and cookie-parser. */
export function typical(app) {
  const outer = express();
  outer.disable('x-powered-by');
  outer.use(morgan('combined', { stream: nowhere }));
  outer.use(cookieParser());
  outer.use(app);
  return outer;
}
