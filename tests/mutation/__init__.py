"""Mutation testing of the C++ headers (run by hand: python tests/mutation/run.py): the mutants
(mutants.py), the runner (run.py) and its recorded results (results.py, results.json)."""
