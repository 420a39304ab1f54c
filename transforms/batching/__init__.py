"""Batching (vmap) as rewrite rules: the `vmap_of` node (terms), the rule book (rule), the builder
(build), batched programs (programs), the API (api: `transforms.vmap`), conformance checks (checks) and
the benchmark (bench); one rule module per primitive family in `rules/`."""
