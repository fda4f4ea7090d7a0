"""What a resumed study does with the trials a dead run left pending.

A run that ends without telling some of its trials (killed, crashed, out of
memory) leaves them pending in its storage. When the study is opened again,
:class:`PendingRetries` offers each one again before any new point
(``resume_pending="retry"``), records it as failed (``"fail"``), or leaves it
pending for another process to tell (``"keep"``). It counts the offers in
the study, so that a point whose evaluation kills the process is given up
after ``MAX_RESUME_OFFERS`` resumes instead of crashing every one.
"""

from __future__ import annotations

import logging

from .history import Trial

__all__ = ["MAX_RESUME_OFFERS", "RESUME_PENDING", "PendingRetries"]

logger = logging.getLogger("treebo")

#: What reopening a storage does with trials a dead run left pending.
RESUME_PENDING = ("retry", "fail", "keep")

#: How many times ``resume_pending="retry"`` offers one pending trial again
#: across resumes. A point whose evaluation kills the process (a segfault, the
#: out-of-memory killer) would otherwise crash every resume, since it is
#: offered first each time; after this many offers it is recorded as failed.
MAX_RESUME_OFFERS = 2


class PendingRetries:
    """The pending trials of a dead run, and how often each was offered again.

    Parameters
    ----------
    offers : dict of str to int
        Offers so far by trial number (a string: the storage keeps them as
        JSON), as stored with the study.

    Attributes
    ----------
    queue : list of int
        Numbers of the trials to offer again, in order.
    offers : dict of str to int
    """

    def __init__(self, offers: dict[str, int]):
        self.queue: list[int] = []
        self.offers = dict(offers)

    def settle(self, trials: list[Trial], policy: str) -> list[tuple[Trial, str]]:
        """Queue the pending ``trials`` to offer again; return those to record as failed.

        Parameters
        ----------
        trials : list of Trial
            The study's trials; only pending ones are looked at.
        policy : {"retry", "fail", "keep"}
            ``resume_pending``.

        Returns
        -------
        list of (Trial, str)
            Each trial to record as failed, with its error text.
        """
        failed: list[tuple[Trial, str]] = []
        for trial in trials:
            if trial.status != "pending" or policy == "keep":
                continue
            offered = self.offers.get(str(trial.number), 0)
            if policy == "fail":
                failed.append(
                    (
                        trial,
                        "abandoned: the run that asked for this point ended before "
                        "telling its value",
                    )
                )
            elif offered >= MAX_RESUME_OFFERS:
                logger.warning(
                    "trial %d: offered again %d times and every run ended before "
                    "telling its value; recorded as failed",
                    trial.number,
                    offered,
                )
                failed.append(
                    (
                        trial,
                        f"abandoned: offered again {offered} times after runs that ended before "
                        "telling its value (does evaluating this point kill the process?)",
                    )
                )
            else:
                self.queue.append(trial.number)
        return failed

    def take(self, trials: list[Trial], n: int) -> list[Trial]:
        """Take up to ``n`` queued trials to offer again, counting the offer.

        Parameters
        ----------
        trials : list of Trial
            The study's trials, indexed by number.
        n : int

        Returns
        -------
        list of Trial
        """
        chosen: list[Trial] = []
        while self.queue and len(chosen) < n:
            trial = trials[self.queue.pop(0)]
            key = str(trial.number)
            self.offers[key] = self.offers.get(key, 0) + 1
            logger.info(
                "offering trial %d again (%d of %d): it was pending when the previous run ended",
                trial.number,
                self.offers[key],
                MAX_RESUME_OFFERS,
            )
            chosen.append(trial)
        return chosen

    def told(self, number: int) -> None:
        """Forget trial ``number``, told without being offered again.

        Parameters
        ----------
        number : int
        """
        if number in self.queue:
            self.queue.remove(number)

    def interrupted(self, trials: list[Trial]) -> bool:
        """Take back the offers of ``trials`` whose evaluation was stopped on purpose.

        Parameters
        ----------
        trials : list of Trial
            Those no longer pending are ignored.

        Returns
        -------
        bool
            Whether a count changed (and needs storing).
        """
        changed = False
        for trial in trials:
            key = str(trial.number)
            if trial.status == "pending" and self.offers.get(key, 0) > 0:
                self.offers[key] -= 1
                changed = True
        return changed

    def state(self) -> tuple[list[int], dict[str, int]]:
        """A copy of the queue and the counts, for :meth:`restore`.

        Returns
        -------
        (list of int, dict of str to int)
        """
        return list(self.queue), dict(self.offers)

    def restore(self, state: tuple[list[int], dict[str, int]]) -> None:
        """Go back to a :meth:`state`.

        Parameters
        ----------
        state : (list of int, dict of str to int)
        """
        self.queue, self.offers = list(state[0]), dict(state[1])
