"""Article text from rendered pages: MediaWiki's own rendering (:mod:`.mediawiki`, a store per
dump: :mod:`.store`), Wikimedia's Enterprise HTML dumps (:mod:`.htmldump`), one HTML-to-text
path (:mod:`.html`), and the text sources a corpus chooses from (:mod:`.sources`)."""
