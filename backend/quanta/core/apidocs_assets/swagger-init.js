// Starts Swagger UI on /docs: a file rather than an inline script, so the page's
// Content-Security-Policy can allow scripts from the app itself only.
window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
