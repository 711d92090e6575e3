"""What screens hold and page through, without widgets: keyset paging, the id pager,
the review filters, labelling keys and the DE-COP view data (shared by the screen
folders, importing none of them)."""
