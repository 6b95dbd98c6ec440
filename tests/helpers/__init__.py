"""Helpers shared by the test modules, defined once: the oracles (helpers.oracles), random data
(helpers.data), threads (helpers.threads), a small port's acl session (helpers.port), marked
source lines (helpers.sites) and the two backends side by side (helpers.backends). Import them
as ``from helpers.oracles import ...`` (pytest puts tests/ on sys.path; see tests/README.md)."""
