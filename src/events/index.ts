export {
  publishSecurityEvent,
  SECURITY_EVENTS_CHANNEL,
  type SecurityEvent,
  type SecurityEventFields,
  type SecurityEventLevel,
  type SecurityPolicy,
  securityEventsWanted,
} from './security-events.js';
