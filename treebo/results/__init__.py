"""Reading a finished (or running) study: its result, the model behind it, its report.

- :mod:`treebo.results.io`: :func:`~treebo.results.io.read_result` (a storage
  file as an :class:`~treebo.OptimizeResult`, read-only), ``dump``/``load`` of a
  result, :func:`~treebo.results.io.as_result`;
- :mod:`treebo.results.inspection`: the surrogate refitted on a result,
  partial dependence and main-effect importance (numbers only);
- :mod:`treebo.results.report`: one self-contained HTML page of a study.

The figures are in :mod:`treebo.plotting` (extra ``[plot]``).
"""
