"""Checkpoints: what each turn changed in the project's files, kept per conversation under
`~/.paicli/checkpoints/`, so `/rewind` and `paicli rewind` can bring the files and the
conversation back to before any turn (store, recorder, scan, toolbox, restore)."""
