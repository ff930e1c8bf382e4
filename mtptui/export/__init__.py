"""`mtptui export`'s headless parts: what the sources' lines left to serve (`state`), and the
Prometheus families made of it (`collector`). Never imports Textual."""
