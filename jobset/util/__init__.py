"""Helpers shared by the JobSet controllers and webhooks (upstream ``pkg/util``)."""
