"""The generation engine above the studies: the runner (generate with any study's
prompts, then judge) and the demo database built from every study's samples."""
