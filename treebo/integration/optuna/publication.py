"""A proposal published in its trial's system attributes, for other workers to read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from optuna.study import Study
from optuna.trial import FrozenTrial

from .codec import Codec

#: System attribute of a trial that holds the number of chunks of its
#: published proposal; the chunks are ``f"{PROPOSAL_KEY}:{i}"``, JSON text of
#: ``{parameter name: internal representation}``.
PROPOSAL_KEY = "treebo:proposal"

# RDBStorage keeps a system attribute's value in a column of 2048 characters
# (its JSON quoting included), so longer proposals are split.
_CHUNK = 2000


def publish_proposal(
    study: Study, trial: FrozenTrial, codecs: Mapping[str, Codec], params: Mapping[str, Any]
) -> None:
    """Write ``params`` into ``trial``'s system attributes for other workers to read."""
    text = json.dumps(
        {name: codecs[name].distribution.to_internal_repr(value) for name, value in params.items()}
    )
    chunks = [text[i : i + _CHUNK] for i in range(0, len(text), _CHUNK)]
    # Optuna offers samplers no public way to annotate a trial; its own
    # samplers write system attributes through the study's storage too.
    storage, trial_id = study._storage, trial._trial_id
    for i, chunk in enumerate(chunks):
        storage.set_trial_system_attr(trial_id, f"{PROPOSAL_KEY}:{i}", chunk)
    # The count last, so that a reader never finds a count without its chunks.
    # A proposal made again may be read half rewritten: published_proposal
    # then fails to parse it and the trial counts as unknown for that one
    # reading.
    storage.set_trial_system_attr(trial_id, PROPOSAL_KEY, len(chunks))


def published_proposal(trial: FrozenTrial) -> dict:
    """The proposal a sampler published for ``trial`` ({} if none, or unreadable)."""
    attrs = trial.system_attrs
    count = attrs.get(PROPOSAL_KEY)
    if not isinstance(count, int) or count < 1:
        return {}
    try:
        proposal = json.loads("".join(attrs[f"{PROPOSAL_KEY}:{i}"] for i in range(count)))
    except (KeyError, TypeError, ValueError):
        # A proposal being rewritten by another process: treat it as unknown.
        return {}
    return proposal if isinstance(proposal, dict) else {}
