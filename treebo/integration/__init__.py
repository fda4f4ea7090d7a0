"""Integrations of treebo into other libraries' optimization loops.

Each submodule needs its library, installed as an extra, and imports it only
when the submodule itself is imported (``import treebo`` never does):

- :mod:`treebo.integration.optuna`: :class:`~treebo.integration.optuna.TreeBOSampler`,
  an Optuna sampler (``pip install 'treebo[optuna]'``).
"""
