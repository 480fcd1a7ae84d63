// Minimal Neo4j Community 5.26 server for CI: embedded DBMS with the Bolt connector
// on 127.0.0.1, auth disabled. Started and stopped by .ci/neo4j.sh.
//
//   java -cp 'lib/*' Launcher.java HOME_DIR [PORT=7687] [PAGECACHE=256m]
//
// Prints "READY bolt://127.0.0.1:PORT" once the default database is available and
// then runs until killed; SIGTERM/SIGINT run managementService.shutdown().
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.SettingValueParsers;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

public class Launcher {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Launcher HOME_DIR [PORT] [PAGECACHE]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 7687;
        long pageCache = SettingValueParsers.BYTES.parse(args.length > 2 ? args[2] : "256m");

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .setConfig(GraphDatabaseSettings.initial_default_database, "neo4j")
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // Unsupported knobs: skip Netty's 5 s graceful-shutdown quiet period on stop.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("SHUTDOWN requested");
            dbms.shutdown();
            System.out.println("SHUTDOWN done");
            System.out.flush();
            stopped.countDown();
        }, "neo4j-shutdown"));

        if (!dbms.database("neo4j").isAvailable(120_000)) {
            System.err.println("FAILED: database 'neo4j' not available");
            System.exit(1);
        }
        System.out.println("READY bolt://127.0.0.1:" + port + " pid=" + ProcessHandle.current().pid());
        System.out.flush();
        stopped.await();
    }
}
