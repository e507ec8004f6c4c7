/*
 * A real single-node Elasticsearch (server, Lucene, Netty HTTP layer) for development and CI.
 *
 * It lives in package org.elasticsearch.node because it needs two package-private members:
 * the Node(NodeConstruction) constructor and NodeServiceProvider. Plugins are loaded from the
 * classpath by MockPluginsService (only Netty4Plugin). These are internal APIs: keep the
 * Elasticsearch version pinned in pom.xml.
 *
 * Environment: ES_HOME (scratch dir, required), ES_PORT (http, default 9200),
 * ES_TRANSPORT_PORT (default 9300), ES_CLUSTER_NAME (default mailgate-dev), ES_NODE_NAME; for a
 * cluster of local nodes ES_SEED_HOSTS (transport host:port list), ES_INITIAL_MASTER_NODES and
 * ES_NODE_ROLES (comma lists).
 */
package org.elasticsearch.node;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.MockPluginsService;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;
import org.elasticsearch.transport.netty4.Netty4Plugin;

public final class LocalElasticsearch extends Node {

    private LocalElasticsearch(Environment env) {
        super(NodeConstruction.prepareConstruction(env, null, new NodeServiceProvider() {
            @Override
            PluginsService newPluginService(Environment e, PluginsLoader loader) {
                return new MockPluginsService(e.settings(), e, List.of(Netty4Plugin.class));
            }
        }, true));
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v.trim();
    }

    public static void main(String[] args) throws Exception {
        // As Elasticsearch's own jvm.options: our shutdown hook logs until the node is closed.
        System.setProperty("log4j.shutdownHookEnabled", "false");
        System.setProperty("log4j2.disable.jmx", "true");
        System.setProperty("log4j2.formatMsgNoLookups", "true");
        String home = env("ES_HOME", null);
        if (home == null) {
            System.err.println("ES_HOME is not set");
            System.exit(2);
        }
        Path homeDir = Path.of(home).toAbsolutePath();
        Path data = homeDir.resolve("data");
        Path logs = homeDir.resolve("logs");
        Files.createDirectories(data);
        Files.createDirectories(logs);
        String nodeName = env("ES_NODE_NAME", "mailgate-local");
        String clusterName = env("ES_CLUSTER_NAME", "mailgate-dev");

        Settings.Builder builder = Settings.builder()
            .put("path.home", homeDir.toString())
            .put("path.data", data.toString())
            .put("path.logs", logs.toString())
            .put("node.name", nodeName)
            .put("cluster.name", clusterName)
            .put("network.host", "127.0.0.1")
            .put("http.port", env("ES_PORT", "9200"))
            .put("transport.port", env("ES_TRANSPORT_PORT", "9300"))
            // Otherwise a nearly full disk turns indices read-only.
            .put("cluster.routing.allocation.disk.threshold_enabled", false);
        // A cluster of several local nodes (es.js start with ES_NODES=2): the others' transport
        // addresses, the master-eligible node that forms the cluster, this node's roles.
        String seeds = env("ES_SEED_HOSTS", null);
        if (seeds == null) {
            builder.put("discovery.type", "single-node");
        } else {
            builder.putList("discovery.seed_hosts", List.of(seeds.split(",")));
            builder.putList("cluster.initial_master_nodes",
                List.of(env("ES_INITIAL_MASTER_NODES", nodeName).split(",")));
            String roles = env("ES_NODE_ROLES", null);
            if (roles != null) builder.putList("node.roles", List.of(roles.split(",")));
        }
        Settings settings = builder.build();

        LogConfigurator.registerErrorListener();
        LogConfigurator.setNodeName(nodeName);
        LogConfigurator.setClusterName(clusterName);
        LogConfigurator.configureWithoutConfig(Settings.builder().put("logger.level", "INFO").build());

        Environment environment =
            InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> nodeName);
        LocalElasticsearch node = new LocalElasticsearch(environment);

        // Elasticsearch's own threads are daemons: the main thread keeps the JVM alive until
        // SIGTERM/SIGINT runs the shutdown hook, which closes the node cleanly.
        CountDownLatch keepAlive = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                if (!node.awaitClose(30, TimeUnit.SECONDS)) {
                    System.err.println("node did not close within 30s");
                } else {
                    System.out.println("local elasticsearch closed");
                }
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                keepAlive.countDown();
            }
        }, "local-es-shutdown"));

        try {
            node.start();
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.out.println("local elasticsearch started: http://127.0.0.1:" + env("ES_PORT", "9200"));
        keepAlive.await();
    }
}
