pytest_plugins = ["tests.fixtures.servers", "tests.fixtures.app"]
