import { rerecordPath, type Automation } from '../../api';
import { Link, useLocation } from '../../router';
import { useIsOwner } from '../../session';

/** The automation page's banners: locator drift (failing) and degraded (a fallback locator was used). */

export function DriftNotice({ automation }: { automation: Automation }) {
  const owner = useIsOwner();
  const { path } = useLocation();
  const step = automation.rerecord_href ? new URL(automation.rerecord_href, window.location.origin).searchParams.get('step') : null;
  const inStudio = path.endsWith('/studio');
  return (
    <div className="notice notice-bad drift-notice">
      <div>
        <strong>Locator drift.</strong> A run could not find{' '}
        {step ? (
          <>
            the element of step <code>{step}</code>
          </>
        ) : (
          'an element'
        )}{' '}
        on the site, so the automation is marked failing (it still runs; the drifted step fails closed).
        {owner
          ? ' Re-record the step (the studio replays the steps before it, you show the changed one), edit the capture, or roll back to a version that works.'
          : ' An owner can re-record the step, edit the capture, or roll back to a version that works.'}
      </div>
      {!inStudio ? (
        <div className="drift-actions">
          {owner && automation.rerecord_href ? (
            <Link to={rerecordPath(automation.rerecord_href)} className="btn btn-small btn-primary">
              Re-record{step ? ` step ${step}` : ''}
            </Link>
          ) : null}
          <Link to={`/automations/${automation.id}/capture${step ? `?step=${encodeURIComponent(step)}` : ''}`} className="btn btn-small">
            Open the capture
          </Link>
        </div>
      ) : null}
    </div>
  );
}

/** Degraded: published, but a run succeeded only through a fallback locator (until a clean run or a new publish). */
export function DegradedNotice({ automation }: { automation: Automation }) {
  const owner = useIsOwner();
  const step = automation.rerecord_href ? new URL(automation.rerecord_href, window.location.origin).searchParams.get('step') : null;
  return (
    <div className="notice notice-warn drift-notice" data-testid="degraded-notice">
      <div>
        <strong>Degraded.</strong> The last run succeeded, but{' '}
        {step ? (
          <>
            step <code>{step}</code>
          </>
        ) : (
          'a step'
        )}{' '}
        found its element only through a fallback locator: the site changed. The automation still runs; the next clean run clears this notice, so does
        publishing a new version.
        {owner ? ' Re-record the step to make the new element its primary locator.' : ''}
      </div>
      {owner && automation.rerecord_href ? (
        <div className="drift-actions">
          <Link to={rerecordPath(automation.rerecord_href)} className="btn btn-small">
            Re-record{step ? ` step ${step}` : ''}
          </Link>
        </div>
      ) : null}
    </div>
  );
}
