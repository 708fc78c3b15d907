-- forensic 0.2: the versioned SQL its pgstore.MIGRATIONS applied as forensic_schema version 1
CREATE TABLE webhooks (
  id BIGSERIAL PRIMARY KEY, received_at DOUBLE PRECISION NOT NULL, "user" TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE alerts (
  fingerprint TEXT PRIMARY KEY, status TEXT NOT NULL, alertname TEXT, labels TEXT NOT NULL,
  annotations TEXT NOT NULL, starts_at DOUBLE PRECISION, ends_at DOUBLE PRECISION, generator_url TEXT,
  investigation_id TEXT, received_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
  receipts INTEGER NOT NULL);
CREATE INDEX alerts_inv ON alerts(investigation_id);
CREATE TABLE dead_letters (
  id BIGSERIAL PRIMARY KEY, received_at DOUBLE PRECISION NOT NULL, "user" TEXT, status INTEGER NOT NULL,
  reason TEXT NOT NULL, body BYTEA);
CREATE TABLE investigations (
  id TEXT PRIMARY KEY, job TEXT, hosts TEXT NOT NULL, gpus TEXT NOT NULL, first_at DOUBLE PRECISION,
  last_at DOUBLE PRECISION, status TEXT NOT NULL, bundle TEXT, thread_id TEXT NOT NULL,
  created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION,
  finished_at DOUBLE PRECISION, report TEXT, verdict TEXT, component TEXT, confidence DOUBLE PRECISION,
  report_status TEXT, alert_count INTEGER NOT NULL DEFAULT 0, resolved_count INTEGER NOT NULL DEFAULT 0,
  owner TEXT, lease_until DOUBLE PRECISION, runs INTEGER NOT NULL DEFAULT 0, error TEXT,
  seq BIGSERIAL NOT NULL);
CREATE INDEX inv_status ON investigations(status, created_at, seq);
CREATE INDEX inv_window ON investigations(last_at);
CREATE TABLE events (
  id BIGSERIAL PRIMARY KEY, investigation TEXT NOT NULL, key TEXT NOT NULL, time DOUBLE PRECISION NOT NULL,
  kind TEXT NOT NULL, data TEXT NOT NULL, UNIQUE(investigation, key));
CREATE TABLE audit (
  id BIGSERIAL PRIMARY KEY, time DOUBLE PRECISION NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
  investigation TEXT, proposal TEXT, content_hash TEXT, outcome TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE FUNCTION forensic_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN RAISE EXCEPTION 'audit log is append-only'; END $$;
CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit
  FOR EACH ROW EXECUTE FUNCTION forensic_audit_append_only();
CREATE TABLE notifications (
  id BIGSERIAL PRIMARY KEY, investigation TEXT NOT NULL, url TEXT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at DOUBLE PRECISION NOT NULL, last_error TEXT,
  UNIQUE(investigation, url));
