"""Reading shell commands: what a line runs (`line`), what paicli knows of common commands'
options (`known`), and what a command reaches (`reach`): the ground permission rules and the
refusal list stand on."""
