"""The tests of react_agent.policies: a package, so that under pytest's default import mode its
test modules may share a name with others (test_answer_floor.py here and in tests/models/)."""
