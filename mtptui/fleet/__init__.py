"""`mtptui fleet`'s headless parts: PromQL over HTTP (`prom`), every host Prometheus knows with
its per-rank figures (`query`), the outliers among them (`outliers`), the table's rows, sort and
filter (`table`), and which SSH host a row opens (`target`). Never imports Textual."""
