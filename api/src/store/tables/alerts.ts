// Alerts: subscriptions, incidents and the notifications sent for them.
// Owns: alert_subscriptions, alert_incidents, alert_notifications. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
