"""Training signals for managers and agents: trajectories, rewards and fine-tuning.

Heavy training libraries (torch, transformers, trl, peft) are imported only inside the
fine-tuning path; install them with ``pip install 'stateguard[train]'``.
"""
