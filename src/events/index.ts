export {
  SECURITY_EVENTS,
  type SecurityEventLevel,
  type SecurityEventName,
  type SecurityEventSpec,
} from './names.js';
export {
  publishSecurityEvent,
  SECURITY_EVENTS_CHANNEL,
  type SecurityEvent,
  type SecurityEventFields,
  type SecurityPolicy,
  securityEventsWanted,
} from './security-events.js';
