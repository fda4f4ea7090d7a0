"""Brute-force references of the Mondrian model, written from the spec independently of treebo.

Shared by the tests of :mod:`treebo.surrogates.mondrian` and its parts.
"""

import numpy as np


def sig(t):
    return 1.0 / (1.0 + np.exp(-t))


def tree_nodes(model, tree):
    """Node ids of one tree (creation order) and the training rows' leaves."""
    nodes = model._nodes
    return np.flatnonzero(nodes.tree == tree)


def route(model, start, x):
    """Path of node ids from ``start`` to the leaf that holds ``x``."""
    nodes = model._nodes
    path = [start]
    while nodes.left[path[-1]] >= 0:
        j = path[-1]
        path.append(nodes.right[j] if x[nodes.feature[j]] > nodes.threshold[j] else nodes.left[j])
    return path


def joint_gaussian(model, tree, X, y, extra=None):
    """Prior covariance of all node means of a tree and the observation matrix.

    Node means: mu_root ~ N(mu, phi_root), mu_j = mu_parent + N(0, phi_j),
    phi_j = sigma_h2 [sig(gamma tau_j) - sig(gamma tau_parent)], written
    with the plain sigmoid. ``extra`` appends nodes (parent, phi) and may
    re-parent existing ones: a dict {node: (new_parent, new_phi)}.
    """
    nodes, hyper = model._nodes, model._hyper
    ids = tree_nodes(model, tree)
    local = {g: i for i, g in enumerate(ids)}
    gamma, sigma_h2 = hyper.gamma[tree], hyper.sigma_h2[tree]
    parent = [local.get(nodes.parent[g], -1) for g in ids]
    tau = nodes.tau[ids]
    tau_parent = np.array(
        [nodes.tau[nodes.parent[g]] if nodes.parent[g] >= 0 else 0.0 for g in ids]
    )
    phi = list(sigma_h2 * (sig(gamma * tau) - sig(gamma * tau_parent)))
    if extra is not None:
        new_nodes, reparent = extra
        for p, v in new_nodes:
            parent.append(p)
            phi.append(v)
        for j, (p, v) in reparent.items():
            parent[j], phi[j] = p, v
    n = len(parent)
    ancestors = np.zeros((n, n))
    for j in range(n):
        k = j
        while k >= 0:
            ancestors[j, k] = 1.0
            k = parent[k]
    cov = ancestors @ np.diag(phi) @ ancestors.T
    H = np.zeros((len(X), n))
    for i, x in enumerate(X):
        H[i, local[route(model, tree, x)[-1]]] = 1.0
    return ids, local, cov, H


def condition(cov, H, y, mu, noise, rows):
    """Posterior (mean about mu, covariance) of the node means given y[rows]."""
    Hr = H[rows]
    gain = cov @ Hr.T @ np.linalg.inv(Hr @ cov @ Hr.T + noise * np.eye(len(rows)))
    return gain @ (y[rows] - mu), cov - gain @ Hr @ cov
