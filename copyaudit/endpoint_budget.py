"""How much one endpoint request may take, by default: the answer's size and the whole
request's time (copyaudit.models.endpoint_limits keeps them). A leaf, so that the CLI's
options and run requests name the defaults without loading the HTTP client."""

from __future__ import annotations

DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # a completion is kilobytes; 8 MiB is plenty
DEFAULT_REQUEST_DEADLINE_S = 300.0  # one request, retries and their waits included
