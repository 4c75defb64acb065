"""The trainer worker (``gameai trainer``): its loop, settings, metrics, what it knows of
production, and the gates a candidate must pass to be published and promoted."""
