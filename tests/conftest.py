"""Test-suite settings shared by every test module."""

try:
    from hypothesis import settings
except ImportError:  # the property-based modules skip themselves then
    settings = None

if settings is not None:
    # Property-based tests draw the same examples on every run and keep no
    # example database: a failure found once must not make later runs of
    # unchanged code fail (issue 17), and CI must see what a developer sees.
    settings.register_profile("deterministic", derandomize=True, database=None)
    settings.load_profile("deterministic")
