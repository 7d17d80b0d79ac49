"""Left here only until the GP helper moves it into ``qbo.gp``: the sufficient-statistics posterior.

The length-scale strategies now live in ``qbo.algorithms.lengthscale`` and the Berkenkamp and
Michalewicz benchmarks in ``qbo.problems.lengthscale_benchmarks``.
"""
