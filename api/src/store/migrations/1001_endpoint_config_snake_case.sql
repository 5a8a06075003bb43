-- Endpoint configuration is spelled snake_case at rest as on the wire (issue 23, ADR 1000):
-- the camelCase keys of config_json (endpoints, endpoint_versions) and of the nested `hmac` and
-- `mapping` objects of action intent parameters (intents previewed before this release stay
-- confirmable) are renamed. config_json is written by JSON.stringify (no whitespace), and
-- inside a JSON string every quote is escaped, so `"key":` matches only object keys. The code
-- reads either spelling (configFromSnake), so a row written meanwhile by an older process is
-- still understood. Audit entries are left as written (the audit chain hashes them).
UPDATE endpoints SET config_json =
  REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(config_json,
    '"senderLabel":', '"sender_label":'), '"triggerVariant":', '"trigger_variant":'), '"authMode":', '"auth_mode":'),
    '"staticHeader":', '"static_header":'), '"toleranceSec":', '"tolerance_sec":'),
    '"dedupeWindowHours":', '"dedupe_window_hours":'), '"timestampHeader":', '"timestamp_header":'),
    '"resourceIdPath":', '"resource_id_path":'), '"relatedResourceIdPath":', '"related_resource_id_path":'),
    '"requiredPaths":', '"required_paths":'), '"externalId":', '"external_id":'), '"eventTypePath":', '"event_type_path":');
UPDATE endpoint_versions SET config_json =
  REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(config_json,
    '"senderLabel":', '"sender_label":'), '"triggerVariant":', '"trigger_variant":'), '"authMode":', '"auth_mode":'),
    '"staticHeader":', '"static_header":'), '"toleranceSec":', '"tolerance_sec":'),
    '"dedupeWindowHours":', '"dedupe_window_hours":'), '"timestampHeader":', '"timestamp_header":'),
    '"resourceIdPath":', '"resource_id_path":'), '"relatedResourceIdPath":', '"related_resource_id_path":'),
    '"requiredPaths":', '"required_paths":'), '"externalId":', '"external_id":'), '"eventTypePath":', '"event_type_path":');
UPDATE action_intents SET params_json =
  REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(params_json,
    '"timestampHeader":', '"timestamp_header":'), '"toleranceSec":', '"tolerance_sec":'),
    '"resourceIdPath":', '"resource_id_path":'), '"relatedResourceIdPath":', '"related_resource_id_path":'),
    '"requiredPaths":', '"required_paths":'), '"externalId":', '"external_id":'), '"eventTypePath":', '"event_type_path":')
  WHERE kind IN ('endpoint_create', 'endpoint_edit');
