"""The audit log of admin actions."""
