"""Left here only until the GP helper moves it into ``qbo.gp``: the time-varying posterior.

Everything else of the former time-varying package has one home elsewhere: the time kernel in
``qbo.gp.time_kernels``, the policies in ``qbo.algorithms`` (``time_varying``,
``q_ctv_gp_ucb``), the drifting problem in ``qbo.problems.drifting`` and the runner in
``qbo.experiments`` (a drifting problem plugs a clock into the one stage loop).
"""
