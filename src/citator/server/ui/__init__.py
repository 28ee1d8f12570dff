"""The research page (`citator ui`): a proposition's supporting and refuting authority side by side."""

from citator.server.ui.app import create_app

__all__ = ["create_app"]
