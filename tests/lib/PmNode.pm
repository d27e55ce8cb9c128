# A test node with pm_index: initialized, pm_index preloaded, started, the extension created in
# database postgres.  Extra postgresql.conf lines are passed as further arguments.
package PmNode;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;

our @EXPORT = qw(pm_node);

sub pm_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', join("\n", "shared_preload_libraries = 'pm_index'", @conf));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION pm_index');
	return $node;
}

1;
