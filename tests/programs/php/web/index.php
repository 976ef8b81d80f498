<?php
// A small web app for PHP's built-in server (php -S 127.0.0.1:N index.php) and PHP-FPM: each request greets by
// name (from the query, or a form POST's body).

function greet(string $name): string
{
    $greeting = "Hello, " . ucfirst($name) . "!"; // in the handler
    return $greeting;
}

$path = parse_url($_SERVER["REQUEST_URI"], PHP_URL_PATH);
if ($path === "/greet") {
    $name = $_POST["name"] ?? $_GET["name"] ?? "world";
    header("Content-Type: text/plain");
    echo greet($name), "\n";
    return true;
}
http_response_code(404);
echo "no page at $path\n";
