"""Root conftest: every ``scenarios/**/*.yaml`` becomes a pytest item through the scenario plugin."""

pytest_plugins = ["fakecluster.pytest_plugin"]
