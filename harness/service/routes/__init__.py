"""The HTTP routes of ``forensic serve``, one router per area; :func:`forensic.harness.service.api.create_app` includes them."""
