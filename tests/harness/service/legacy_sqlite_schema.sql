-- forensic 0.2: the tables SqliteStore created itself (CREATE TABLE IF NOT EXISTS), and the
-- execution ledger's own table, as a database served and executed from by that release has them
CREATE TABLE IF NOT EXISTS webhooks (
  id INTEGER PRIMARY KEY, received_at REAL NOT NULL, user TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS alerts (
  fingerprint TEXT PRIMARY KEY, status TEXT NOT NULL, alertname TEXT, labels TEXT NOT NULL,
  annotations TEXT NOT NULL, starts_at REAL, ends_at REAL, generator_url TEXT,
  investigation_id TEXT, received_at REAL NOT NULL, updated_at REAL NOT NULL, receipts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS alerts_inv ON alerts(investigation_id);
CREATE TABLE IF NOT EXISTS dead_letters (
  id INTEGER PRIMARY KEY, received_at REAL NOT NULL, user TEXT, status INTEGER NOT NULL,
  reason TEXT NOT NULL, body BLOB);
CREATE TABLE IF NOT EXISTS investigations (
  id TEXT PRIMARY KEY, job TEXT, hosts TEXT NOT NULL, gpus TEXT NOT NULL, first_at REAL, last_at REAL,
  status TEXT NOT NULL, bundle TEXT, thread_id TEXT NOT NULL, created_at REAL NOT NULL,
  updated_at REAL NOT NULL, started_at REAL, finished_at REAL, report TEXT, verdict TEXT,
  component TEXT, confidence REAL, report_status TEXT, alert_count INTEGER NOT NULL DEFAULT 0,
  resolved_count INTEGER NOT NULL DEFAULT 0, owner TEXT, lease_until REAL, runs INTEGER NOT NULL DEFAULT 0,
  error TEXT);
CREATE INDEX IF NOT EXISTS inv_status ON investigations(status);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY, investigation TEXT NOT NULL, key TEXT NOT NULL, time REAL NOT NULL,
  kind TEXT NOT NULL, data TEXT NOT NULL, UNIQUE(investigation, key));
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY, time REAL NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
  investigation TEXT, proposal TEXT, content_hash TEXT, outcome TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
  BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TABLE IF NOT EXISTS notifications (
  id INTEGER PRIMARY KEY, investigation TEXT NOT NULL, url TEXT NOT NULL, payload TEXT NOT NULL,
  state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL, last_error TEXT,
  UNIQUE(investigation, url));
CREATE TABLE IF NOT EXISTS executions (
    thread TEXT NOT NULL, proposal_id TEXT NOT NULL, content_hash TEXT NOT NULL, action TEXT, target TEXT,
    executor TEXT, state TEXT NOT NULL, plan TEXT, detail TEXT, "by" TEXT, started DOUBLE PRECISION,
    finished DOUBLE PRECISION, PRIMARY KEY (thread, proposal_id, content_hash));
