"""The statistics every validation reports with, in one place."""
import math

from scipy.stats import kendalltau


def kendall_tau(x, y):
    """Kendall's tau-b of two orderings of the same items (Debian's python3-scipy
    kendalltau; ties count as analyzer/src/pipeline/ranking.cpp counts them). NaN
    under two items or when either ordering is all ties."""
    if len(x) < 2:
        return float("nan")
    tau = kendalltau(x, y).statistic
    return float(tau) if not math.isnan(tau) else float("nan")
