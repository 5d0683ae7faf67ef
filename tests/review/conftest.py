"""Fixtures of the review package's tests: a fake Label Studio for the unit tests (the
live server stays for the integration tests in test_label_studio.py)."""

from __future__ import annotations

import pytest

from testaug.review.label_studio import LabelStudio
from tests.review.fake_label_studio import FakeLabelStudioClient, connect


@pytest.fixture
def fake_client() -> FakeLabelStudioClient:
    """An empty fake Label Studio server with two users (ids 1 and 2)."""
    return FakeLabelStudioClient()


@pytest.fixture
def studio(fake_client: FakeLabelStudioClient) -> LabelStudio:
    """testaug's Label Studio connection over the fake client, retrying without waiting."""
    return connect(fake_client)
