<?php
// Renders pages for wikiorigin: one JSON request a line on stdin ({"title", "text", "timestamp"}), one JSON
// answer a line on stdout ({"html", "categories", "templates"} or {"error"}), in one PHP process.
// Run as: php render.php --conf STORE/LocalSettings.php (MW_INSTALL_PATH: the MediaWiki tree).
$IP = getenv( 'MW_INSTALL_PATH' ) ?: '/usr/share/mediawiki';
require_once "$IP/maintenance/Maintenance.php";

class WikioriginRender extends Maintenance {
	public function execute() {
		$parser = MediaWiki\MediaWikiServices::getInstance()->getParserFactory()->create();
		// Cite 1.39 links <ref name=""> ({{efn}} and the like pass name={{{name|}}}) to a note id that
		// is not there ("cite_note-"): an empty name is no name, as in later Cite
		$ref = $parser->setHook( 'ref', static function () {
			return '';
		} );
		if ( $ref !== null ) {
			$parser->setHook( 'ref', static function ( $text, array $argv, $parser, $frame ) use ( $ref ) {
				if ( isset( $argv['name'] ) && trim( $argv['name'] ) === '' ) {
					unset( $argv['name'] );
				}
				return $ref( $text, $argv, $parser, $frame );
			} );
		}
		$flags = JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE;
		$lang = MediaWiki\MediaWikiServices::getInstance()->getContentLanguage();
		$tracking = []; // categories MediaWiki adds to pages by itself (script errors, broken file links ...)
		$services = MediaWiki\MediaWikiServices::getInstance();
		foreach ( $services->getTrackingCategories()->getTrackingCategories() as $kind ) {
			foreach ( $kind['cats'] as $cat ) {
				$tracking[$cat->getDBkey()] = true;
			}
		}
		$hello = [ 'version' => MW_VERSION, 'template' => $lang->getNsText( NS_TEMPLATE ) ];
		echo json_encode( $hello, JSON_UNESCAPED_UNICODE ) . "\n";
		while ( ( $line = fgets( STDIN ) ) !== false ) {
			$req = json_decode( $line, true );
			try {
				$title = Title::newFromText( $req['title'] ) ?? Title::newFromText( 'Page' );
				$opts = ParserOptions::newFromAnon();
				if ( isset( $req['timestamp'] ) ) { // "now" is the revision's time: the same text on every run
					$opts->setTimestamp( wfTimestamp( TS_MW, $req['timestamp'] ) );
				}
				$out = $parser->parse( $req['text'], $title, $opts, true, true );
				$html = $out->getText( [ 'enableSectionEditLinks' => false, 'allowTOC' => false ] );
				$used = [];
				foreach ( $out->getTemplates() as $ns => $pages ) {
					foreach ( array_keys( $pages ) as $key ) {
						$used[] = Title::makeTitle( $ns, (string)$key )->getPrefixedText();
					}
				}
				$answer = [
					'html' => $html,
					'categories' => $this->categories( $out, $tracking ),
					'templates' => $used,
				];
			} catch ( Throwable $e ) {
				$answer = [ 'error' => get_class( $e ) . ': ' . $e->getMessage() ];
			}
			echo json_encode( $answer, $flags ) . "\n";
			fflush( STDOUT );
		}
	}

	/** The page's categories as readers see them (spaces, not underscores), MediaWiki's own left out. */
	private function categories( ParserOutput $out, array $tracking ): array {
		$names = [];
		foreach ( array_keys( $out->getCategories() ) as $key ) {
			if ( !isset( $tracking[(string)$key] ) ) {
				$names[] = strtr( (string)$key, '_', ' ' );
			}
		}
		return $names;
	}
}

$maintClass = WikioriginRender::class;
require_once RUN_MAINTENANCE_IF_MAIN;
