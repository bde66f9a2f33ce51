import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent } from 'express-api-conventions';
import pino from 'pino';

/**
 * Writes every security event (docs/observability.md) as one JSON line on
 * standard error, through pino, synchronously. The line is the event itself:
 * pino's levels are the vocabulary's (INFO, WARN, CRITICAL), written as the
 * event's `level`, and pino adds nothing (no pid, hostname or time: the event
 * has its `datetime`). Returns the function that stops it.
 */
export function logSecurityEvents(destination: number = process.stderr.fd): () => void {
  const logger = pino(
    {
      level: 'INFO',
      customLevels: { INFO: 30, WARN: 40, CRITICAL: 50 },
      base: null,
      timestamp: false,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ dest: destination, sync: true }),
  );
  const write = (message: unknown): void => {
    const { level, ...event } = message as SecurityEvent;
    logger[level](event);
  };
  subscribe(SECURITY_EVENTS_CHANNEL, write);
  return () => {
    unsubscribe(SECURITY_EVENTS_CHANNEL, write);
  };
}
