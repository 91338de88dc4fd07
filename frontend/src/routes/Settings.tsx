import { AgentsCard } from '../components/Settings/AgentsCard';
import { AuditCard } from '../components/Settings/AuditCard';
import { ChannelsCard } from '../components/Settings/ChannelsCard';
import { InstancesCard } from '../components/Settings/InstancesCard';
import { TokensCard } from '../components/Settings/TokensCard';
import { UsersCard } from '../components/Settings/UsersCard';
import { useIsAdmin } from '../hooks/useMe';

/**
 * Settings: the monitored instances and their agents' health for everyone; chat channels,
 * API tokens, users and the audit log for admins only (a viewer would just get 403s, so they
 * are not shown).
 */
export function Settings() {
  const admin = useIsAdmin();
  return (
    <section className="settings" aria-labelledby="settings-title">
      <div className="page-header">
        <h1 id="settings-title">Settings</h1>
      </div>
      <InstancesCard admin={admin} />
      <AgentsCard admin={admin} />
      {admin && (
        <>
          <ChannelsCard />
          <TokensCard />
          <UsersCard />
          <AuditCard />
        </>
      )}
    </section>
  );
}
