import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { SECURITY_EVENTS_CHANNEL, type SecurityEvent, setWarningHandler } from 'express-api-conventions';
import pino from 'pino';

/**
 * Writes every security event (docs/observability.md) as one JSON line on
 * standard error, through pino, synchronously. The line is the event itself
 * and the instance that logged it (`instance`, `pid`): pino's levels are the
 * vocabulary's (INFO, WARN, CRITICAL), written as the event's `level`, and
 * pino adds no time (the event has its `datetime`). The library's warnings
 * become WARN lines of the same logger (`warning`: the `EAC_*` code), so the
 * stream is JSON lines only. Returns the function that stops both.
 */
export function logSecurityEvents(instance: string, destination: number = process.stderr.fd): () => void {
  const logger = pino(
    {
      level: 'INFO',
      customLevels: { INFO: 30, WARN: 40, CRITICAL: 50 },
      base: { instance, pid: process.pid },
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
  setWarningHandler(({ code, message }) => {
    logger.WARN({ datetime: new Date().toISOString(), warning: code, description: message });
  });
  return () => {
    unsubscribe(SECURITY_EVENTS_CHANNEL, write);
    setWarningHandler();
  };
}
