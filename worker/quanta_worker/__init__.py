"""Quanta's Celery worker: thin tasks around the backend's services."""
