"""Scripts run by hand to (re)create test fixtures; the tests import their definitions."""
