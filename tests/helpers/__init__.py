"""Test helpers: mutation enumeration, coefficient-table schemes and numeric oracles."""
