export {
  SECURITY_EVENTS,
  type SecurityEventLevel,
  type SecurityEventName,
  type SecurityEventReason,
  type SecurityEventSpec,
} from './names.js';
export {
  publishSecurityEvent,
  refusalPublishedFor,
  SECURITY_EVENTS_CHANNEL,
  type SecurityEvent,
  type SecurityEventFields,
  type SecurityPolicy,
  securityEventsWanted,
} from './security-events.js';
