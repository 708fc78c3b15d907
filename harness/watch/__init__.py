"""Watch: follow live jobs, run the streaming detectors, open investigations through intake."""
