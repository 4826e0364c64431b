<?php
// Parsoid HTML for the tests, as Wikimedia's Enterprise HTML dumps carry it: one JSON request a line on stdin
// ({"title", "text"}), one JSON answer a line ({"html"} or {"error"}), with MediaWiki's bundled Parsoid.
// Run as: php parsoid.php --conf STORE/LocalSettings.php (MW_INSTALL_PATH: the MediaWiki tree).
$IP = getenv( 'MW_INSTALL_PATH' ) ?: '/usr/share/mediawiki';
require_once "$IP/maintenance/Maintenance.php";
use MediaWiki\MediaWikiServices;
use MediaWiki\Revision\MutableRevisionRecord;
use MediaWiki\Revision\SlotRecord;
use Wikimedia\Parsoid\Parsoid;
class WikioriginParsoid extends Maintenance {
	public function execute() {
		$s = MediaWikiServices::getInstance();
		$parsoid = new Parsoid( $s->getParsoidSiteConfig(), $s->getParsoidDataAccess() );
		echo json_encode( [ 'hello' => 1 ] ) . "\n";
		while ( ( $line = fgets( STDIN ) ) !== false ) {
			$req = json_decode( $line, true );
			try {
				$title = Title::newFromText( $req['title'] );
				$rev = new MutableRevisionRecord( $title );
				$rev->setSlot( SlotRecord::newUnsaved( SlotRecord::MAIN, new WikitextContent( $req['text'] ) ) );
				$rev->setTimestamp( '20260801000000' );
				$pc = $s->getParsoidPageConfigFactory()->create( $title, null, $rev );
				$html = $parsoid->wikitext2html( $pc, [ 'body_only' => false, 'wrapSections' => true ] );
				$a = [ 'html' => $html ];
			} catch ( Throwable $e ) {
				$a = [ 'error' => get_class( $e ) . ': ' . $e->getMessage() . ' ' . $e->getFile() . ':' . $e->getLine() ];
			}
			echo json_encode( $a, JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE ) . "\n";
			fflush( STDOUT );
		}
	}
}
$maintClass = WikioriginParsoid::class;
require_once RUN_MAINTENANCE_IF_MAIN;
